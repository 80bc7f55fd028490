import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { ApiError } from "./api/client";
import { App } from "./app";
import { navigate } from "./router";
import "./styles.css";

/** A lost session (401 from any call) sends the user to sign in again. */
function onError(e: unknown) {
  if (e instanceof ApiError && e.status === 401 && !/^\/console\/sign-(in|up)/.test(window.location.pathname)) {
    client.setQueryData(["me"], null);
    navigate("/sign-in", { replace: true });
  }
}

const client = new QueryClient({
  queryCache: new QueryCache({ onError }),
  mutationCache: new MutationCache({ onError }),
  defaultOptions: {
    queries: {
      retry: (count, e) => !(e instanceof ApiError && e.status >= 400 && e.status < 500) && count < 2,
      refetchOnWindowFocus: true,
    },
  },
});

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <QueryClientProvider client={client}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
