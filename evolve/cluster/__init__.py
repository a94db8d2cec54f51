"""Runs on a Ray cluster: the head-node half (a Worker), the worker-node half, and a local test cluster."""
