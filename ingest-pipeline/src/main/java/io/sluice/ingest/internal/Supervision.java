package io.sluice.ingest.internal;

import io.sluice.core.SluiceException;
import io.sluice.ingest.PipelineState;

/**
 * The state of one supervised pipeline thread and the rule it lives by: a configuration error stops it for good
 * ({@link PipelineState#FAILED} with the reason); anything else thrown out of its loop — the broker, ClickHouse or
 * Redis away, a batch that failed — is transient: the loop starts again from the committed offsets after a
 * backoff, for as long as it lasts. Written by the pipeline thread, read by anyone.
 */
public final class Supervision {
    private volatile PipelineState state = PipelineState.STARTING;
    private volatile String reason;
    private volatile Throwable failure;
    private volatile long restarts;

    /** Configuration errors: no retry can fix them. */
    public static boolean isConfigError(Throwable t) {
        return t instanceof SluiceException.InvalidConfigException || t instanceof SluiceException.UnknownTopicException;
    }

    public PipelineState state() {
        return state;
    }

    /** Why the pipeline is {@link PipelineState#RETRYING} or {@link PipelineState#FAILED}; null otherwise. */
    public String reason() {
        return reason;
    }

    /** The error that stopped the pipeline for good, or null. */
    public Throwable failure() {
        return failure;
    }

    /** How many times the loop was started again after a transient failure. */
    public long restarts() {
        return restarts;
    }

    public void running() {
        if (state != PipelineState.FAILED && state != PipelineState.CLOSED) {
            state = PipelineState.RUNNING;
            reason = null;
        }
    }

    public void retrying(String why) {
        if (state != PipelineState.FAILED && state != PipelineState.CLOSED) {
            state = PipelineState.RETRYING;
            reason = why;
        }
    }

    public void restarted() {
        restarts++;
    }

    public void failed(Throwable t) {
        failure = t;
        reason = String.valueOf(t.getMessage() != null ? t.getMessage() : t.toString());
        state = PipelineState.FAILED;
    }

    public void closed() {
        if (state != PipelineState.FAILED) {
            state = PipelineState.CLOSED;
            reason = null;
        }
    }
}
