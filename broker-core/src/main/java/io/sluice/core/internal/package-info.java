/**
 * Broker-core machinery, not API. {@code bus}: partition rings (Disruptor) and their handlers; {@code journal}:
 * the Chronicle Queue journal of a partition, its codec, readers and retention; {@code group}: consumer-group
 * membership and committed offsets; {@code client}: the embedded producer and consumers.
 */
package io.sluice.core.internal;
