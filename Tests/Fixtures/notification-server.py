#!/usr/bin/python3
"""A desktop notification server for tests (org.freedesktop.Notifications on the session bus of
DBUS_SESSION_BUS_ADDRESS), standing in for the user at GNOME Shell or dunst: it shows nothing, logs
each notification as a JSON line to LOG, and answers it as told.

usage: notification-server.py ANSWER LOG
  ANSWER  yes | no: the user clicks that action 0.2 s after the notification appears;
          close: the user closes it without a click; ignore: nobody does anything;
          noactions: the server says it cannot show actions.

Needs Debian's python3-dbus and python3-gi; prints "ready" when it owns the name."""
import json, sys
import dbus, dbus.service, dbus.mainloop.glib
from gi.repository import GLib

answer, log = sys.argv[1], sys.argv[2]
NAME = "org.freedesktop.Notifications"


class Server(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, "/org/freedesktop/Notifications")
        self.next_id = 0

    @dbus.service.method(NAME, out_signature="as")
    def GetCapabilities(self):
        return ["body"] if answer == "noactions" else ["actions", "body"]

    @dbus.service.method(NAME, out_signature="ssss")
    def GetServerInformation(self):
        return ("heed-test", "heed", "1", "1.2")

    @dbus.service.method(NAME, in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app, replaces, icon, summary, body, actions, hints, timeout):
        self.next_id += 1
        number = self.next_id
        with open(log, "a") as file:
            file.write(json.dumps({"app": app, "summary": summary, "body": body, "actions": list(actions), "timeout": timeout}) + "\n")
        if answer in ("yes", "no"):
            GLib.timeout_add(200, lambda: self.ActionInvoked(number, answer) or False)
        elif answer == "close":
            GLib.timeout_add(200, lambda: self.NotificationClosed(number, 2) or False)
        return number

    @dbus.service.method(NAME, in_signature="u")
    def CloseNotification(self, number):
        with open(log, "a") as file:
            file.write(json.dumps({"closed": int(number)}) + "\n")
        self.NotificationClosed(number, 3)

    @dbus.service.signal(NAME, signature="us")
    def ActionInvoked(self, number, action):
        pass

    @dbus.service.signal(NAME, signature="uu")
    def NotificationClosed(self, number, reason):
        pass


dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
name = dbus.service.BusName(NAME, bus)
server = Server(bus)
print("ready", flush=True)
GLib.MainLoop().run()
