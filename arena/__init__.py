"""Evaluation: tournaments, duplicate deals and their statistics, the game-record format and replays, the anchored
ladder and population analysis. Above the env and agents layers, below training, the web app and the command line."""
