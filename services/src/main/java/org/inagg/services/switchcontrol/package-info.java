/**
 * The software switch's control port ({@code inagg switch --control HOST:PORT}): HTTP+JSON to add, replace and remove
 * jobs with their registered sources, as the controller programs a switch (docs/controller.md, "Switch control").
 */
package org.inagg.services.switchcontrol;
