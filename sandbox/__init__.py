"""A simulated Woodpecker CI 3.17 API server for tests and the quick start; it knows nothing of the product."""
