package io.sluice.core;

/** A live subscription; closing it stops its thread and removes it from the rings. */
public interface Subscription extends AutoCloseable {
    String name();

    /** Events delivered so far. */
    long delivered();

    @Override
    void close();
}
