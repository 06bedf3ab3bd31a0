"""The shipped training configs (YAML): package data, so an installed packetrow can run them."""
