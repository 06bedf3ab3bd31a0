"""Self-play training (SB3's MaskablePPO on the batched engine, RLlib), its configs, checkpoints and evaluations, the
best response of ``packetrow exploit`` and the imitation of recorded play: the layer above env, agents and arena."""
