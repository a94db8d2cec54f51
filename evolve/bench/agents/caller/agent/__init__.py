"""A tool-calling coding agent: the model calls functions (OpenAI native tool calls) until it calls
`finish`."""
