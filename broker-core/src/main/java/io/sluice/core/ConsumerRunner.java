package io.sluice.core;

/** A running push consumer (see {@link Broker#startConsumer}). Closing it stops the thread after the current batch. */
public interface ConsumerRunner extends AutoCloseable {
    /** Records handed to the handler so far. */
    long delivered();

    /** Handler failures so far (each failed batch is redelivered). */
    long failures();

    @Override
    void close();
}
