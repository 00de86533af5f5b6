/**
 * Who may speak for a job: its workers' sources (registered by the control plane, or learned from JOINs in open
 * mode), its session, and each worker's incarnation. One component for every node that answers JOINs: the software
 * switch, the ESA switch and the parameter server (docs/sessions.md); and what they log about joins
 * ({@code JoinLog}), which is why it lives here rather than in {@code softswitch}: {@code esa} uses it, and
 * {@code softswitch} uses {@code esa}'s PARTIAL codec.
 */
package org.inagg.p4.membership;
