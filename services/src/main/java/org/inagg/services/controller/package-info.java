/**
 * The controller ({@code inagg controller}, docs/controller.md): admits jobs by name, assigns job ids, worker ids and
 * slot ranges, registers each rank's source with the switch, issues sessions, keeps leases, frees what vanished, and
 * survives its own restart through a journal.
 * <ul>
 *   <li>{@link org.inagg.services.controller.Controller}: the service (context, launch, HTTP routes);
 *   {@code JobRegistry} maps each request onto the parts below and their results onto HTTP answers.</li>
 *   <li>{@code JobLifecycle}: the rules (admission, sessions, leases, who may: {@code JobAccess}) on an injected clock,
 *   with no HTTP, JSON or switch call; it refuses with a {@code Refusal}.</li>
 *   <li>{@code RegistryState}: the jobs and registrations, each change journaled ({@code JobJournal},
 *   {@code JournalRecords}, {@code Journal}) and recovered at start.</li>
 *   <li>{@code SwitchSync}: every call to the switch, outside the state's lock;
 *   {@link org.inagg.services.controller.SwitchBackend} is the one interface to the switches it programs.</li>
 *   <li>{@code PlanService}: {@code POST /v1/plans}, the control module's planners within a time limit.</li>
 *   <li>{@link org.inagg.services.controller.ControllerClient}: what a worker uses to find its job.</li>
 * </ul>
 */
package org.inagg.services.controller;
