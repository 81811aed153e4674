package io.sluice.faults;

import io.sluice.core.Consumer;
import io.sluice.core.ConsumerGroups;

/** The group generation of a consumer's current assignment, for the history. */
final class Membership {
    private Membership() {
    }

    /** The generation of the consumer's assignment, -1 outside a group or while it rebalances. */
    static int generation(Consumer consumer) {
        return consumer.groupMembership().filter(m -> !m.pending()).map(ConsumerGroups.Membership::generation).orElse(-1);
    }
}
