/**
 * The one codec of Kafka's RecordBatch v2 in Sluice (docs/journal-format.md), used by broker-core's journal and bus
 * and by sluice-client's protocol alike: {@link io.sluice.records.RecordBatch} (a bounds-checked flyweight over the
 * header), {@link io.sluice.records.RecordBatchWriter}, {@link io.sluice.records.RecordBatchReader} and
 * {@link io.sluice.records.RecordBatchChecker} (what a broker accepts from a producer, returned as a
 * {@link io.sluice.records.CheckedBatch}). Everything works in place on a {@link java.nio.ByteBuffer}.
 */
package io.sluice.records;
