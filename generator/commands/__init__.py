"""The costpress commands, one module per area; generator.cli gathers them into the group."""
