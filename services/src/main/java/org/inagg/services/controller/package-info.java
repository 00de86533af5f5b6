/**
 * The controller ({@code inagg controller}, docs/controller.md): admits jobs by name, assigns job ids, worker ids and
 * slot ranges, registers each rank's source with the switch, issues sessions, keeps leases, frees what vanished, and
 * survives its own restart through a journal. {@link org.inagg.services.controller.Controller} is the service,
 * {@link org.inagg.services.controller.ControllerClient} what a worker uses to find its job, and
 * {@link org.inagg.services.controller.SwitchBackend} the one interface to the switches it programs.
 */
package org.inagg.services.controller;
