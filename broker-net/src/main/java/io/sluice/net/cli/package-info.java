/** {@code bin/sluice}: {@link io.sluice.net.cli.SluiceCli} and its subcommands (broker, topics, produce, consume, perf tools). */
package io.sluice.net.cli;
