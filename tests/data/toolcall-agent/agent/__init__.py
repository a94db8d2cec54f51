"""A second, deliberately different agent: OpenAI native tool calls, one file, no edit protocol of its own."""
