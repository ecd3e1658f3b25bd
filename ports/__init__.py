"""The application boundary: port Protocols, port-level errors and the use cases that drive them."""
