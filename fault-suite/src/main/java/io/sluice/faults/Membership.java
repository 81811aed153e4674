package io.sluice.faults;

import io.sluice.core.Consumer;

import java.lang.reflect.Method;
import java.util.Optional;

/**
 * The group member id and generation of a consumer's current assignment, for the history.
 *
 * <p>Why reflection: {@code Consumer.groupMembership()} (member id + generation) comes with the groups-with-generations
 * work, which lands in parallel with this suite. Looking it up at run time lets the suite run on the code before
 * that work (generation -1: the checker reports "two members of one generation" as not checkable) and check the
 * property on the code after it, without a change here. Once it is in main, this becomes a plain call.
 */
final class Membership {
    private static final Method GROUP_MEMBERSHIP = find(Consumer.class, "groupMembership");

    private Membership() {
    }

    private static Method find(Class<?> c, String name) {
        try {
            return c.getMethod(name);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    /** The generation of the consumer's assignment, -1 if unknown (outside a group, rebalancing, or not reported). */
    static int generation(Consumer consumer) {
        Object m = membership(consumer);
        if (m == null) {
            return -1;
        }
        try {
            return (int) m.getClass().getMethod("generation").invoke(m);
        } catch (ReflectiveOperationException e) {
            return -1;
        }
    }

    private static Object membership(Consumer consumer) {
        if (GROUP_MEMBERSHIP == null) {
            return null;
        }
        try {
            Object o = GROUP_MEMBERSHIP.invoke(consumer);
            return o instanceof Optional<?> opt ? opt.orElse(null) : o;
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }
}
