"""Every `evolve bench` implementation: numbers for speed and quality targets."""
