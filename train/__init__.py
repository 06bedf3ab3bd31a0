"""Training, evaluation and tournaments: the top of the stack (imports packetrow_env and agents)."""
