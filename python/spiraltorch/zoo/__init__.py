"""Runnable model recipes of the model zoo (``python -m spiraltorch.zoo.<recipe>``)."""
