"""Offline tooling: recording mocks and the render that runs a stack without the Pulumi CLI."""
