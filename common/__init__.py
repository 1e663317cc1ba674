"""What the environments and the learner share, with no dependency on either: the CPU count."""
