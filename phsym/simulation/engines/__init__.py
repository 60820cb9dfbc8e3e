"""The loops a :class:`~phsym.simulation.plan.RunPlan` drives."""
