/** A fake-backend app with a token field that is not secure (test/trace/secret-mask.test.ts). */
const frame = { x: 100, y: 100, w: 800, h: 600 };

export function secretDesktop(token: string, title = "Sign in") {
  return {
    apps: [
      {
        name: "Vault",
        pid: 91,
        windows: [
          {
            title,
            frame,
            root: {
              role: "frame",
              title,
              frame,
              children: [
                {
                  role: "text",
                  title: "User",
                  settable: true,
                  valueType: "string",
                  value: "ada",
                  frame: { x: 120, y: 120, w: 200, h: 20 },
                },
                {
                  role: "text",
                  title: "Token",
                  settable: true,
                  valueType: "string",
                  value: token,
                  frame: { x: 120, y: 150, w: 200, h: 20 },
                },
                {
                  role: "push button",
                  title: "Sign in",
                  actions: ["click"],
                  frame: { x: 120, y: 200, w: 200, h: 20 },
                },
              ],
            },
          },
        ],
      },
    ],
  };
}

/** The Token field's line number in a snapshot's text. */
export function tokenIndex(text: string): number {
  const line = text.split("\n").find((l) => / Token(,|$)/.test(l));
  if (line === undefined) throw new Error(`no Token field in:\n${text}`);
  return Number(/(\d+)/.exec(line)![1]);
}
