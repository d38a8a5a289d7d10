"""Hand-written max-margin algorithms: SMO, Gilbert/MDM, perceptrons."""
