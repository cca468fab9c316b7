import { api, describeError } from "./api.js";
import { h, messageArea, showMessage } from "./dom.js";
import type { User } from "./wire.js";

function field(id: string, label: string, type: string, autocomplete: string): HTMLElement[] {
  return [
    h("label", { for: id }, label),
    h("input", { id, name: id, type, autocomplete, required: true }),
  ];
}

const fieldValue = (form: HTMLFormElement, name: string) =>
  (form.elements.namedItem(name) as HTMLInputElement).value;

/**
 * Sign-in, or the first user's registration while the service has no user yet. `done` gets
 * the signed-in user.
 */
export async function authPage(main: HTMLElement, done: (user: User) => void): Promise<void> {
  const { open } = await api<{ open: boolean }>("/auth/registration");
  const message = messageArea();
  const submit = async (form: HTMLFormElement) => {
    try {
      if (open) {
        await api("/auth/register", {
          method: "POST",
          body: {
            name: fieldValue(form, "name"),
            email: fieldValue(form, "email"),
            password: fieldValue(form, "password"),
          },
        });
      }
      const session = await api<{ user: User }>("/auth/login", {
        method: "POST",
        body: { email: fieldValue(form, "email"), password: fieldValue(form, "password") },
      });
      done(session.user);
    } catch (error) {
      showMessage(message, describeError(error), "error");
    }
  };
  const form = h(
    "form",
    {
      class: "auth",
      onsubmit: (event: Event) => {
        event.preventDefault();
        void submit(event.target as HTMLFormElement);
      },
    },
    ...(open ? field("name", "Name", "text", "name") : []),
    ...field("email", "Email", "email", "username"),
    ...field("password", "Password", "password", open ? "new-password" : "current-password"),
    h("button", { type: "submit" }, open ? "Create the first account" : "Sign in"),
    message,
  );
  main.replaceChildren(
    h("h1", {}, open ? "Create the first account" : "Sign in"),
    ...(open
      ? [
          h(
            "p",
            {},
            "No user exists yet: the first account can be created without the API key. " +
              "Later accounts need it.",
          ),
        ]
      : []),
    form,
  );
  main.querySelector("input")?.focus();
}
