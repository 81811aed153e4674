package io.sluice.ingest;

import io.sluice.core.SluiceException;

/**
 * ClickHouse or Redis refused or could not be reached. {@link #isDataError()} tells a row the server rejected
 * (parse or type error: retrying cannot help, the row is dead-lettered) from a transient failure (retried with
 * backoff). {@link #serverCode()} is ClickHouse's error code, or -1.
 */
public class IngestException extends SluiceException {
    private static final long serialVersionUID = 1L;

    private final int serverCode;
    private final boolean dataError;
    private final boolean outcomeUnknown;

    public IngestException(String message, int serverCode, boolean dataError, boolean outcomeUnknown, Throwable cause) {
        super(Code.UNKNOWN, message, cause);
        this.serverCode = serverCode;
        this.dataError = dataError;
        this.outcomeUnknown = outcomeUnknown;
    }

    public int serverCode() {
        return serverCode;
    }

    /** The server rejected the data itself: the same rows will fail again. */
    public boolean isDataError() {
        return dataError;
    }

    /**
     * The table does not match what the pipeline sends (code 16, NO_SUCH_COLUMN_IN_TABLE: a column was dropped or
     * renamed after start). Not a bad row: retried with backoff until the table is fixed, and reported.
     */
    public boolean isSchemaError() {
        return serverCode == 16;
    }

    /** The request may or may not have been applied (connection lost or timed out after sending). */
    public boolean isOutcomeUnknown() {
        return outcomeUnknown;
    }

    /** A row that was rejected by ClickHouse and written to the dead letters; the message is the server's. */
    public static final class RowRejectedException extends IngestException {
        private static final long serialVersionUID = 1L;

        public RowRejectedException(String message) {
            super(message, -1, true, false, null);
        }
    }
}
