"""ParaAMR experiment suite."""
