package io.sluice.core;

import java.util.List;

/**
 * Push-style consumption: invoked on the consumer's own named thread with each polled batch. When it returns
 * normally the batch is committed (group consumers); when it throws, the batch is not committed and is
 * delivered again after the error is reported.
 */
@FunctionalInterface
public interface RecordHandler {
    void onRecords(List<ConsumerRecord> records) throws Exception;
}
