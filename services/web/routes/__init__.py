"""The web's routes, one router per concern; ``app.py`` includes them all."""
