"""Seeded whole-cluster simulations of the consensus core (``sim.py``; replay a seed with
``python -m tests.simulation.sim --seed N``)."""
