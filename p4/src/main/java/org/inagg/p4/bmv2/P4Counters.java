package org.inagg.p4.bmv2;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where {@code inagg_v1model.p4} counts what, read from its source (the class path copy the program was compiled
 * from), so the Java side follows the program as it changes: each {@code const bit<32> C_NAME = i;} is the
 * {@code SwitchCounter} NAME at index i (type id - 200), each {@code E_NAME} the {@code EsaCounter} NAME (type id -
 * 300), and the cells of a kind are that index in every counter array that counts a constant of the kind
 * ({@code Control.array}: {@code InaggIngress.inagg_counters} and, for what egress counts per replica,
 * {@code InaggEgress.egress_counters}; {@code esa_counters} and {@code esa_egress_counters} for E_). A name's value is
 * the sum of its cells.
 */
final class P4Counters
{
    private static final Pattern CONSTANT =
        Pattern.compile("const\\s+bit<32>\\s+([CE])_([A-Z0-9_]+)\\s*=\\s*(\\d+)\\s*;");
    private static final Pattern CONTROL = Pattern.compile("\\bcontrol\\s+(\\w+)\\s*\\(");
    private static final Pattern COUNT = Pattern.compile("\\b(\\w+)\\.count\\(\\s*([CE])_[A-Z0-9_]+\\s*\\)");
    private static volatile P4Counters v1model;

    /** Kind (C or E) -> counter name -> index. */
    private final Map<Character, Map<String, Integer>> indices = new TreeMap<>();
    /** Kind (C or E) -> arrays counting it. */
    private final Map<Character, Set<String>> arrays = new TreeMap<>();

    P4Counters(final String source)
    {
        final Matcher constant = CONSTANT.matcher(source);
        while (constant.find())
        {
            indices.computeIfAbsent(constant.group(1).charAt(0), kind -> new LinkedHashMap<>())
                .put(constant.group(2), Integer.parseInt(constant.group(3)));
        }
        final List<Integer> controlStarts = new ArrayList<>();
        final List<String> controls = new ArrayList<>();
        final Matcher control = CONTROL.matcher(source);
        while (control.find())
        {
            controlStarts.add(control.start());
            controls.add(control.group(1));
        }
        final Matcher count = COUNT.matcher(source);
        while (count.find())
        {
            String owner = null;
            for (int i = 0; i < controls.size() && controlStarts.get(i) < count.start(); i++)
            {
                owner = controls.get(i);
            }
            if (owner == null)
            {
                throw new IllegalStateException("counter " + count.group(1) + " counted outside any control");
            }
            arrays.computeIfAbsent(count.group(2).charAt(0), kind -> new LinkedHashSet<>())
                .add(owner + "." + count.group(1));
        }
    }

    /** The program the class path holds (parsed once). */
    static P4Counters v1model()
    {
        P4Counters counters = v1model;
        if (counters == null)
        {
            counters = new P4Counters(Bmv2Program.source(Bmv2Program.V1MODEL_MAIN));
            v1model = counters;
        }
        return counters;
    }

    /**
     * The cells ({@code counter_read} arguments: array and index) of counter {@code name} of a kind ({@code 'C'} for
     * SwitchCounter, {@code 'E'} for EsaCounter); empty if the program does not count it.
     */
    List<String> cells(final char kind, final String name)
    {
        final Integer index = indices.getOrDefault(kind, Map.of()).get(name);
        final List<String> cells = new ArrayList<>();
        if (index != null)
        {
            for (final String array : arrays.getOrDefault(kind, Set.of()))
            {
                cells.add(array + " " + index);
            }
        }
        return cells;
    }

    /** The names of a kind, in the order the program declares them. */
    Set<String> names(final char kind)
    {
        return indices.getOrDefault(kind, Map.of()).keySet();
    }
}
