"""The whole job in order: plan (switch choice + topology), lay out and cable, bill, compare."""
