"""Change of a built fabric: phases of a build-out, growth between designs, design diffs."""
