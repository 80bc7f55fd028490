import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import { api, unwrap } from "../api/client";
import { Link, navigate } from "../router";
import { Button, ErrorNote, Field } from "../ui/ui";

/** Sign in and sign up, with the API's session cookie (/api/v1/auth/login, /auth/signup). */
export function AuthPage({ mode, signedIn }: { mode: "in" | "up"; signedIn: boolean }) {
  const qc = useQueryClient();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [name, setName] = useState("");
  useEffect(() => {
    document.title = `${mode === "in" ? "Sign in" : "Create an account"} — Console`;
  }, [mode]);
  const submit = useMutation({
    mutationFn: () =>
      mode === "in"
        ? unwrap(api.POST("/api/v1/auth/login", { body: { email, password } }))
        : unwrap(api.POST("/api/v1/auth/signup", { body: { email, password, name: name || undefined } })),
    onSuccess: async () => {
      qc.clear();
      await qc.invalidateQueries({ queryKey: ["me"] });
      navigate("/");
    },
  });
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    submit.mutate();
  };
  return (
    <main id="main" className="auth">
      <form className="card auth-card" onSubmit={onSubmit} aria-labelledby="auth-title">
        <p className="brand">KB Console</p>
        <h1 id="auth-title">{mode === "in" ? "Sign in" : "Create an account"}</h1>
        {signedIn && (
          <p className="note">
            You are signed in already. <Link to="/">Open the console</Link>.
          </p>
        )}
        {mode === "up" && <Field label="Name" autoComplete="name" value={name} onChange={(e) => setName(e.target.value)} />}
        <Field label="Email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        <Field
          label="Password"
          type="password"
          autoComplete={mode === "in" ? "current-password" : "new-password"}
          required
          minLength={mode === "up" ? 10 : undefined}
          hint={mode === "up" ? "At least 10 characters." : undefined}
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        <ErrorNote error={submit.error} />
        <Button type="submit" variant="primary" busy={submit.isPending}>
          {mode === "in" ? "Sign in" : "Create account"}
        </Button>
        <p className="muted">
          {mode === "in" ? (
            <>
              New here? <Link to="/sign-up">Create an account</Link>
            </>
          ) : (
            <>
              Have an account? <Link to="/sign-in">Sign in</Link>
            </>
          )}
        </p>
      </form>
    </main>
  );
}
