"""Test stand-ins, shipped in the package and never the default: scripted models, stand-in APIs, a scripted
worker."""
