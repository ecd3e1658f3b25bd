"""The one parser each for the values that arrive as text from outside: keys, URLs and token shapes.

Every place that reads one of these calls the function here (settings, the HTTP gates, the
gateway, the link page), so a hostile spelling is refused, or read, the same way everywhere.
Each raises or returns without echoing the value: it may be a secret.
"""
