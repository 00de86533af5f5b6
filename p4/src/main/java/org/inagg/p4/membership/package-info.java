/**
 * Who may speak for a job: its workers' sources (registered by the control plane, or learned from JOINs in open
 * mode), its session, and each worker's incarnation ({@link org.inagg.p4.membership.JobMembership}); and the
 * lifecycle lines a node logs about them ({@link org.inagg.p4.membership.JoinLog}). One component for every node that
 * answers JOINs (the software switch, the ESA switch and the parameter server, through the {@code pipeline}'s
 * {@code JoinStage}; docs/sessions.md). Depends on nothing else of the p4 module.
 */
package org.inagg.p4.membership;
