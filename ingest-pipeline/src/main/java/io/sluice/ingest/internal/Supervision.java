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

    /** What a supervised loop does with an error thrown out of it. */
    public enum Decision {
        /** A configuration error (or a JVM {@link Error}): no retry can fix it; the loop stops, {@link PipelineState#FAILED}. */
        STOP,
        /** The topic does not exist yet and the pipeline waits for it: look again after a backoff, healthy. */
        WAIT_FOR_TOPIC,
        /** Anything else is transient: start again from the committed offsets after a backoff. */
        RESTART
    }

    /** Whether an unknown topic is a configuration error or something to wait for. */
    public enum MissingTopic {
        /** A broker's own pipelines: the topic is in the same configuration, so a missing one is a mistake. */
        FAIL,
        /** A standalone {@code sluice ingest}: the topic may be created later, as Kafka Connect waits for it. */
        WAIT
    }

    /** Configuration errors: no retry can fix them. */
    public static boolean isConfigError(Throwable t) {
        return t instanceof SluiceException.InvalidConfigException || t instanceof SluiceException.UnknownTopicException;
    }

    /** The restart rule, as a function of the error alone (and the missing-topic policy). */
    public static Decision decide(Throwable t, MissingTopic missingTopic) {
        if (t instanceof SluiceException.UnknownTopicException && missingTopic == MissingTopic.WAIT) {
            return Decision.WAIT_FOR_TOPIC;
        }
        return isConfigError(t) || t instanceof Error ? Decision.STOP : Decision.RESTART;
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

    /** The topic does not exist yet; returns true the first time (so the caller logs it once). */
    public boolean waitingForTopic(String why) {
        if (state == PipelineState.FAILED || state == PipelineState.CLOSED) {
            return false;
        }
        boolean first = state != PipelineState.WAITING_FOR_TOPIC;
        state = PipelineState.WAITING_FOR_TOPIC;
        reason = why;
        return first;
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
