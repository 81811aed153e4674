/**
 * Sluice broker-core: the embeddable event bus and durable journal.
 *
 * <p>The public API lives in this package; everything under {@code io.sluice.core.internal} is machinery
 * that may change without notice. The event path, from a producer thread to a consumer:
 *
 * <pre>
 *  Producer.send ──► partition ring (LMAX Disruptor, one per partition, bounded)
 *                       │
 *                       ▼
 *                 journal writer (one thread per partition, Chronicle Queue append,
 *                       │          smart batching: sync/complete at end of batch)
 *            ┌──────────┴───────────┐
 *            ▼                      ▼
 *   live subscribers          Consumer.poll (tailers over the journal, from any offset;
 *   (after the journal in      consumer groups share partitions and commit offsets)
 *    the Disruptor graph)
 * </pre>
 *
 * <p>Start with {@link io.sluice.core.Broker#open(BrokerConfig)}.
 */
package io.sluice.core;
