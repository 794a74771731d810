// Placeholder: owned by the exec helper (runner.yml / exec-harness targets).
