package io.sluice.core;

import org.HdrHistogram.Histogram;

import java.util.List;

/**
 * A snapshot of the broker's counters and latency histograms (nanoseconds). Histograms are cumulative since the
 * broker opened; they are copies the caller owns.
 *
 * @param publishToJournal    from {@code Producer.send} to the journal append, across all partitions
 * @param journalToSubscriber from the journal append to a live subscriber's {@code onEvent}
 */
public record BrokerMetrics(List<PartitionStats> partitions, Histogram publishToJournal, Histogram journalToSubscriber) {

    /**
     * @param published     events put on the ring
     * @param journaled     events appended to the journal
     * @param journaledBytes bytes appended to the journal
     * @param backPressured  sends that found the ring full (each retry counts)
     * @param ringCapacity  ring slots
     * @param ringOccupancy slots currently holding events not yet consumed by the slowest handler
     * @param startOffset   first retained offset
     * @param endOffset     next offset to be assigned
     * @param journalErrors failed appends (for example disk full)
     */
    public record PartitionStats(String topic, int partition, long published, long journaled, long journaledBytes,
                                 long backPressured, int ringCapacity, long ringOccupancy, long startOffset,
                                 long endOffset, long journalErrors) {
    }

    public long totalPublished() {
        return partitions.stream().mapToLong(PartitionStats::published).sum();
    }

    public long totalJournaled() {
        return partitions.stream().mapToLong(PartitionStats::journaled).sum();
    }
}
