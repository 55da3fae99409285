"""The reactive layer: sources (cold observables of body chunks), the operators over them
(``frame``, ``decode``, ``group_by_block``, ``accumulate_json``, ``tap_usage``,
``on_error``...), sinks (renderers, loggers, tracers, recorders, Redis), and what they
share: the scope async sources pump in, the chunk reader, the fan-out. Builds on the core
and the wire."""
