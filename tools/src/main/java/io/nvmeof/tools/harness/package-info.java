/**
 * The programs the scripts of {@code bench/} run beside a target: {@link
 * io.nvmeof.tools.harness.Soak} (a verifying load from one host process), {@link
 * io.nvmeof.tools.harness.FaultProxy} (a TCP proxy that injects network faults), {@link
 * io.nvmeof.tools.harness.IdleConnections} and {@link io.nvmeof.tools.harness.IdleHost} (what idle
 * connections cost). They are compiled with the build, so an API change that breaks them breaks
 * the build, and run from the CLI jar: {@code java -cp cli/build/nvmeof.jar
 * io.nvmeof.tools.harness.Soak --help}. Benchmarks' helpers, not an API.
 */
package io.nvmeof.tools.harness;
