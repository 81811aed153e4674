package io.sluice.core;

/**
 * Completion of one send, invoked exactly once on the partition's journal thread (or the caller's thread
 * when the send is rejected up front). Keep it short: it runs on the hot path. Primitive arguments so that
 * acknowledging allocates nothing.
 */
@FunctionalInterface
public interface SendCallback {
    /**
     * @param partition the partition, or -1 if the send failed before a partition was chosen
     * @param offset    the dense offset, or -1 for {@link Acks#MEMORY} or on failure
     * @param error     {@code null} on success, otherwise why the event was not accepted
     */
    void onCompletion(int partition, long offset, Throwable error);
}
