/** {@code bin/sluice}: {@link io.sluice.cli.SluiceCli} and its subcommands (broker, topics, produce, consume, perf tools). */
package io.sluice.cli;
