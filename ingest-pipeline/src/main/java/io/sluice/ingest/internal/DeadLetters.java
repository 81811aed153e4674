package io.sluice.ingest.internal;

import java.util.List;

/** Where rows that ClickHouse rejected go, with the server's message. Implementations retry transient failures. */
public interface DeadLetters {

    /** One rejected row: its event bytes, the error, and where it came from (stream id, topic/partition/offset...). */
    record Letter(byte[] payload, String error, String source) {
    }

    /** Stores the letters durably before returning. */
    void write(List<Letter> letters);
}
