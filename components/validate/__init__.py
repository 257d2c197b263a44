"""Post-deploy validation of a stack's cluster against its render (README, "Validation")."""
