"""Facts about the models evolve talks to, with no I/O: what each provider accepts (capabilities), what
hosted models cost (pricing), and the embedded models' catalogue. The bottom layer: config validates
against them, the llm layer builds requests and clients from them."""
